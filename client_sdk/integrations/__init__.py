"""Loggers and callbacks for Lightning, the Hugging Face Trainer and Accelerate (each imported on its own)."""
