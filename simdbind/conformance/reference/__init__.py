"""NumPy references, one module per simdbind family. Written from the contract (the documentation pages and the
spec's Base semantics), never from the C kernels."""
