"""The shipped skills' sha256 (written by ``make pin-skills``)."""

SHIPPED: dict[str, str] = {
    'archivist.py': 'e154df4f30bb620ff2372f10ae58fce9edc38769a1c8f89d62f1fcac0f21e6bf',
    'chat.py': '00b73c94333f63216005757ed0a687b8619c9e5ed27624e0af9de068fcd864a6',
    'dispatcher.py': 'fca8187d22307ddfcca15d2e8cd68bde772ad521684a85d37f599d648eff6632',
    'events.py': 'ed5358ddfa5b6d276d9d7566e7dcb36ce1f9078ad7946cc8c11fc0c1c47f1292',
    'files.py': '00e92a5564e98123bcbf1b355e8d92e418d09e4b4f8fe17f736799d9bc097182',
    'flightplans.py': 'fe88d4a8509b3529754392d1c09e97bb5889530036bc167a07d19bba6f2041c5',
    'gardener.py': '4cf8720103f06d5dabebe14b5357259de27ad8343f67b6006b24ccf899b67fc9',
    'hooks.py': 'a283cc217dfa13b041d06b4841405a57e67edd14a268be22dfef574c542a0df4',
    'intents.py': '164c2bf8b30f91617a1abc4bcfaa59a4c2cc9cbb7a9dde98f2eddde890ce2a7a',
    'mcp.py': 'a87e3a9e0793d09fcab907063ac6ba39e9443ab714239f4acfc271eb34c8c9ee',
    'memory.py': '976c196b0d02101fc284e6bcbc6705d407cb64d92e2eba60a0c2cf7342a40a5b',
    'orgtools.py': '7cdc7537441197c654a543c7b7083a069bba08284bd1f81e1f35bb539efc6504',
    'policy.py': 'fea4ae96ca7ab38dc4b522c93e66a4220436d7345a1ac2f6ae61722f0d59f008',
    'reflexes.org': '3a61ab36c578991725279f4bccc449a76d25cab8e174d3eded3227ab0ed26e42',
    'scribe.py': '7084f8f991311561a4f59d394b9d1d271a3bf650076de1c92c9ea80e9777af27',
    'selfimprove.py': '09b31369ab0ea0709e367f94a474796843bdd6e13813d7aeb6443e6e380f4734',
    'shell.py': '7788713c8bfd7ceb730f0645ef88e708a246ba895c8db1679e3fa281b399d218',
}
