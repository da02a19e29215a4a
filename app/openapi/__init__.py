"""The contract generated from the code: openapi.yaml is written by app.openapi.generator
(`make spec`) from the request schemas the views load with, the answers' documentation
schemas (answers.py), the operations (paths.py) and the prose (descriptions.py)."""
