"""ember: PyTorch's API over pluggable backends."""
