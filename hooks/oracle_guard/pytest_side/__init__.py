"""pytest itself: the plugin and its watch, configuration and CI readers, switches, collection, scratch runs."""
