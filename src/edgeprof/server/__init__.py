"""The agent server behind ``edgeprof mcp``: its tools, the worker process each call runs in, and the kernel
confinement (Landlock) of those workers."""
