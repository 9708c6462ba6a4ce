"""The house itself: the registries, the method records, the measure catalog, the import graph."""
