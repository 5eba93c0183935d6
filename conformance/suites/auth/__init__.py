"""Suite auth: the tool server and its authorization server, as a host links an account."""
