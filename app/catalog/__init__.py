"""The catalog: models, GPUs and precisions stored in the database, seeded from files."""
