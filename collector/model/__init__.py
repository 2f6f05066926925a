"""The model side: shipped architectures, precisions, weights, the transformers runner and its backend."""
