"""The Spark engine, with a real Spark."""
