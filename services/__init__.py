"""The engine service: plain functions over the database (`services.matches`,
`services.bots`), and the gRPC server (`services.server`) whose servicers are thin over them."""
