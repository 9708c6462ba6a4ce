"""The numpy layer: methods and measures on arrays, against slow references."""
