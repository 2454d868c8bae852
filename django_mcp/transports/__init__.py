"""Transports: bytes in, messages to the dispatcher, messages back out as bytes."""
