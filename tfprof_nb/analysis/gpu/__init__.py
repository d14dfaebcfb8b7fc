"""GPUs: device activity and launches, the GPU time accounting (busy, idle by cause) and its
tables, launch links, kernel stats."""
