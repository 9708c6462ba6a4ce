"""The engine-free kernels shared by the out-of-core path and the Spark executors."""
