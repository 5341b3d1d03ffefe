"""Code generated from proto/ by `make proto`; do not edit."""
