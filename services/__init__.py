"""The engine service: plain functions over the database (`services.matches`, `services.actions`,
`services.bots`; under them `services.games` and `services.clocks`), and the gRPC server
(`services.server`) whose servicers are thin over them."""
