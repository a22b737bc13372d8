"""Where the embedded AWS differs from plain moto, one package per AWS service: the rules of that
service and the thin adapters that put them into moto's backends and responses."""
