"""Suite campaigns: the advertising campaign endpoints of the platform API (CAMP-*)."""
