"""The publisher: accepted submissions -> parquet tables and a dataset card -> Hugging Face Hub, Zenodo."""
