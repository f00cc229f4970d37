"""The three roles. Each returns results or edits; none touches git or the filesystem."""
