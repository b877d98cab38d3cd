"""The op table and what runs through it: parsing a producer event, de-duplicating and merging a job, applying."""
