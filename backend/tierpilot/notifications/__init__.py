"""In-app notifications and their optional webhook delivery."""
