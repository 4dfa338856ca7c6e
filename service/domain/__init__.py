"""What the service decides about play, apart from how it is served or stored: the
dailies' days, seeds and commitments (`daily`), what a player's runs say of them
(`history`), and the spoiler-free strip and text a run shares (`share`)."""
