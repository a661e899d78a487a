"""The shipped skills' sha256 (written by ``make pin-skills``)."""

SHIPPED: dict[str, str] = {
    'archivist.py': 'e154df4f30bb620ff2372f10ae58fce9edc38769a1c8f89d62f1fcac0f21e6bf',
    'chat.py': 'e6be45abb10b44adb1eb52fdb6c26bab8a8aa372f9b3f6809cdc175ac7b56a8c',
    'dispatcher.py': 'fca8187d22307ddfcca15d2e8cd68bde772ad521684a85d37f599d648eff6632',
    'events.py': '1543172b973351fd178523663d01dcd1e09f047b2871988223ccf380c63cc9d0',
    'files.py': '00e92a5564e98123bcbf1b355e8d92e418d09e4b4f8fe17f736799d9bc097182',
    'flightplans.py': 'df20089031b46a64ac33b2f5f0515a34cb82eb312773e2be59b0979164c43024',
    'gardener.py': '4cf8720103f06d5dabebe14b5357259de27ad8343f67b6006b24ccf899b67fc9',
    'hooks.py': '859c61fdb3691834e3b841f3129ec4e9ce2f9d6ca999755d73afbc0f277214ef',
    'intents.py': 'db2b95428e25fb2a3071b78693bf0e863a30dd7dd70100967b2e431297c99183',
    'mcp.py': 'dd50671437096f66da672423bcdcd340dc02e83c230db8dfa5f6b386a4f10f13',
    'memory.py': 'dcd1d7825396cb8b653a04e70b7811485e3799ddd5afb80379ea9d70c6d98cf1',
    'orgtools.py': 'f03ca8b3eefd18123571bc8517598e454a3ee84faf7b7a9dbb165466d1df8ad6',
    'policy.py': 'fea4ae96ca7ab38dc4b522c93e66a4220436d7345a1ac2f6ae61722f0d59f008',
    'reflexes.org': '3a61ab36c578991725279f4bccc449a76d25cab8e174d3eded3227ab0ed26e42',
    'scribe.py': '7084f8f991311561a4f59d394b9d1d271a3bf650076de1c92c9ea80e9777af27',
    'selfimprove.py': 'a0fea617402ce515504c783b146419f14cc836f50a795bf8fb87abb9bd243add',
    'shell.py': '7788713c8bfd7ceb730f0645ef88e708a246ba895c8db1679e3fa281b399d218',
}
