"""Speech to text and text to speech (D78): providers, audio conversion, the inbound step."""
