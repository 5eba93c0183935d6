"""Suite compression: the image compression API (rules IMG-*)."""
