"""Output stages: each reads the build record and card images and writes one kind of output."""
