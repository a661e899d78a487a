"""The shipped skills' sha256 (written by ``make pin-skills``)."""

SHIPPED: dict[str, str] = {
    'archivist.py': '3fc642a98c8f681b8cb963f2a0d3882ca5b9f6b62bcb05f9066b39e072a7ae39',
    'chat.py': '8b14e46f72def2f55a9505adbac3b69598bd135814b1aa7f749f116281b361e1',
    'dispatcher.py': '8e0624be3cbfd2a9fc636925317d47c6e5ccb7777e8752c9c6041e74a93128c5',
    'events.py': '285a67e5a7b4baba3db45129eaa87c3b15ecb891ebacead149193089c7a92874',
    'files.py': '58edb20272bc3cf287349cd75fdac037f7df47f63a99470280d9ee30b530bdb0',
    'flightplans.py': 'cf58f08e923780fe7e25084eeffca1b0792470418a34897527b93f0fe735a8da',
    'gardener.py': '5714edfc7b9c495b08f884d84a44f9b67bda3a51c146d47c6eb08ca07e8b34c2',
    'hooks.py': 'e8403533d91f72208e39880807915f3d95077edbb562f1d117143d7665bf6df2',
    'intents.py': '7213565f8dc36f1b120a42612ffdd001eafd4b9d790fe79361f27e21265fd941',
    'mcp.py': 'ffa8f847ba70dcaacf81de2ce0d5fc1301054abdf3e99417a86a9800c24c68ad',
    'memory.py': '32aa744f8ac7ce2bb5cb8aca0ccf46ea4d4a1f9e66eacb2f7832300cb6e8cb32',
    'orgtools.py': 'dd57effe9651292cbef3ed147dcbc816c3360403bf22a2485995710f777750a8',
    'policy.py': 'd931edae8bf6eff05c7c21270548b39924586c680f2e093f4188f6a9aa218d75',
    'reflexes.org': '2d430a8b325d949bb236cfcc8ac4c4c1dcd998dadad90cbae383ee93f5a2863c',
    'scribe.py': 'b32e28cfe0933c1ba2386265c515ec3b831e09c20d334aed43ee3c0db0eed917',
    'selfimprove.py': '9fed2d79841acfd070251d1dfdee74fc262eac76e3fe0ee8b67075a1d881b152',
    'shell.py': '18aa09be4da2b6cf0ce26088d7a023d3176262d49cf3a634649e1f590337e22a',
}
