"""Prompts staff write and preview in the admin (docs/prompts.md, "Prompts in the database")."""
