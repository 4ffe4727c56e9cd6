// The HTTPLogging module.
