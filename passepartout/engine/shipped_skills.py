"""The shipped skills' sha256 (written by ``make pin-skills``)."""

SHIPPED: dict[str, str] = {
    'archivist.py': '3fc642a98c8f681b8cb963f2a0d3882ca5b9f6b62bcb05f9066b39e072a7ae39',
    'chat.py': '6ec8329c370f16ec3f302b7173313fe06a6b32f7ba99be8b20b9c7999c3ecd6c',
    'dispatcher.py': '8e0624be3cbfd2a9fc636925317d47c6e5ccb7777e8752c9c6041e74a93128c5',
    'events.py': '2f119261d64739f9251a36f85b3eb7284bcc001aa43e075e612fd9203d5d6d3e',
    'files.py': '58edb20272bc3cf287349cd75fdac037f7df47f63a99470280d9ee30b530bdb0',
    'flightplans.py': '350ed46fa355b65d07461e1fc4543901143bb48960468e6f7bdc49c0758de536',
    'gardener.py': '5714edfc7b9c495b08f884d84a44f9b67bda3a51c146d47c6eb08ca07e8b34c2',
    'hooks.py': '8474978f1459542d0e5080abea95ad8d4e28588f1897fd2908ffea82eadca931',
    'intents.py': '5a703280aadc196b2fef8b3bb3939329b76047449f0722155f43d1e564ac57f4',
    'mcp.py': '721739f0fcbdf90eade65e02b4f64838ede665c92e64fea356ed5c5adf4bce72',
    'memory.py': 'cf3a40776ca276b7c82bda9dd3978ac78d9c5446ac648167effb1bd4e842a3ec',
    'orgtools.py': '2a387e84615ece44dcd45d275ae944d3c261a324a228f60ae5f2aebb9c623839',
    'policy.py': 'd931edae8bf6eff05c7c21270548b39924586c680f2e093f4188f6a9aa218d75',
    'reflexes.org': '2d430a8b325d949bb236cfcc8ac4c4c1dcd998dadad90cbae383ee93f5a2863c',
    'scribe.py': 'b32e28cfe0933c1ba2386265c515ec3b831e09c20d334aed43ee3c0db0eed917',
    'selfimprove.py': '9262b08c118aa565845a609eeb0028c6831169bd2f4e9def5b2fae073ae7cb6f',
    'shell.py': '18aa09be4da2b6cf0ce26088d7a023d3176262d49cf3a634649e1f590337e22a',
}
