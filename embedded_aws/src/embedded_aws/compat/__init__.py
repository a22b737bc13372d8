"""Changes to moto that make the embedded AWS behave like AWS where this project depends on it,
by service. Each `patch_*` function is applied once, by `embedded_aws.server.emulator.EmbeddedAWS.start`."""
