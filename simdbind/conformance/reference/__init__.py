"""NumPy references, one module per simdbind family. Written from the contract (upstream's documentation of each
function in SimdLib.h, and what its Base code computes), never from the C kernels."""
