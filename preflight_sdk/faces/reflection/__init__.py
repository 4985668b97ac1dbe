"""What the generated faces share: the operation registry read by reflection, its
arguments, docstrings and examples, and the envelope an outcome becomes."""
