"""Fast inference runtimes for TIDE's token classifiers (ONNX Runtime; PyTorch stays the reference)."""
