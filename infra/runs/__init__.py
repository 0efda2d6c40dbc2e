"""What a finished or running run left in its directory, read back (no TensorFlow needed)."""
