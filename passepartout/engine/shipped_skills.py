"""The shipped skills' sha256 (written by ``make pin-skills``)."""

SHIPPED: dict[str, str] = {
    'archivist.py': '3fc642a98c8f681b8cb963f2a0d3882ca5b9f6b62bcb05f9066b39e072a7ae39',
    'chat.py': 'dab913ba374a78398f11f2267031e5e30136ce21e677973a1a8fb0c9ee2ab56e',
    'dispatcher.py': '8e0624be3cbfd2a9fc636925317d47c6e5ccb7777e8752c9c6041e74a93128c5',
    'events.py': '5c72560ac4c8ef919daf712e1da3ff0846878edd77690963830b681bb76e8838',
    'files.py': '58edb20272bc3cf287349cd75fdac037f7df47f63a99470280d9ee30b530bdb0',
    'flightplans.py': 'cf58f08e923780fe7e25084eeffca1b0792470418a34897527b93f0fe735a8da',
    'gardener.py': '5714edfc7b9c495b08f884d84a44f9b67bda3a51c146d47c6eb08ca07e8b34c2',
    'hooks.py': '76d4b6b26099caeba9b99cc36efc6c28d0599ed684687c0ce58629390d21d8c7',
    'intents.py': 'a0b8c0fe66b7cd72479b2ff327c2742334b287c60f49613ac99c93d2b409c36e',
    'mcp.py': 'ffa8f847ba70dcaacf81de2ce0d5fc1301054abdf3e99417a86a9800c24c68ad',
    'memory.py': '43a92f052b44e408677ab04a44ba07f802a4110c36ef332beb6b1740f7fa3d61',
    'orgtools.py': '4a2f9e30c5cac8ba1e9bf25adb4813bb9fdf0aab7dd4d5ab9cc7babc87fe0db3',
    'policy.py': 'd931edae8bf6eff05c7c21270548b39924586c680f2e093f4188f6a9aa218d75',
    'reflexes.org': '2d430a8b325d949bb236cfcc8ac4c4c1dcd998dadad90cbae383ee93f5a2863c',
    'scribe.py': 'b32e28cfe0933c1ba2386265c515ec3b831e09c20d334aed43ee3c0db0eed917',
    'selfimprove.py': '7c1a6eac0b8d78ee962b54c29b724947c1f144eb0b7e8d04b2cc72da0c7ebfa8',
    'shell.py': '18aa09be4da2b6cf0ce26088d7a023d3176262d49cf3a634649e1f590337e22a',
}
