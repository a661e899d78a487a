"""The places no tool may read (credentials) or write (what runs code or holds trust).

One list for every consumer: the file tools refuse them, the shell analyser asks or
refuses, and the sandbox hides the credentials and mounts the protected places
read-only (after every bind, so no workspace uncovers them).  The agent's own places
(config, state, skills directories, ``approvals.org``, ``policy.toml``) are added at
run time by :class:`passepartout.security.guard.Security`.

Entries starting with ``~`` are relative to the home directory; entries without a
leading ``/`` or ``~`` (``.git/hooks``) match wherever they appear in a path; an entry
with ``*`` (``~/.bash*``) is a pattern on a home's entries.  Every git directory
anywhere, not only ``.git`` (submodules, worktrees, bare repositories), keeps its
:data:`GIT_PROTECTED` entries read-only.  The file
tools also refuse a credential entry's home-relative part wherever it appears
(``/home/other/.npmrc``, ``/root/.config/gcloud``), whatever ``HOME`` says.
"""

from __future__ import annotations

# Where credentials live: refused to every tool, hidden (empty) inside the sandbox.
CREDENTIALS: tuple[str, ...] = (
    # keys and password stores
    "~/.ssh", "~/.gnupg", "~/.password-store", "~/.local/share/keyrings",
    "~/.local/share/kwalletd", "~/.config/op", "~/.vault-token", "~/.authinfo",
    "~/.authinfo.gpg", "~/.netrc", "~/.pgpass", "~/.my.cnf", "~/.s3cfg", "~/.boto",
    "~/.gnome2/keyrings", "~/.kde/share/apps/kwallet", "~/.local/share/python_keyring",
    "~/.config/Bitwarden", "~/.config/Bitwarden CLI", "~/.config/1Password",
    "~/.config/sops", "~/.pki", "~/.msmtprc", "~/.config/msmtp", "~/.fetchmailrc",
    "~/.curlrc", "~/.wgetrc",
    # cloud SDKs and deployment tools
    "~/.aws", "~/.azure", "~/.config/gcloud", "~/.oci", "~/.config/doctl",
    "~/.config/heroku", "~/.config/netlify", "~/.config/rclone", "~/.terraform.d",
    "~/.kube", "~/.docker", "~/.config/containers/auth.json",
    "~/.dockercfg", "~/.minikube", "~/.config/helm", "~/.config/hcloud",
    "~/.config/openstack", "~/.config/linode-cli", "~/.pulumi", "~/.fly",
    "~/.wrangler", "~/.config/.wrangler", "~/.cloudflared", "~/.databrickscfg",
    "~/.snowsql", "~/.ngrok2", "~/.config/ngrok", "~/.config/stripe", "~/.terraformrc",
    "~/.kaggle", "~/.huggingface", "~/.cache/huggingface/token",
    "~/.cache/huggingface/stored_tokens",
    # package registries and forges
    "~/.npmrc", "~/.yarnrc", "~/.yarnrc.yml", "~/.pypirc", "~/.gem/credentials",
    "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.git-credentials",
    "~/.config/git/credentials", "~/.config/gh", "~/.config/hub", "~/.config/glab-cli",
    "~/.config/tea", "~/.m2/settings.xml", "~/.m2/settings-security.xml",
    "~/.gradle/gradle.properties", "~/.composer/auth.json", "~/.config/composer/auth.json",
    "~/.nuget/NuGet/NuGet.Config", "~/.config/NuGet/NuGet.Config", "~/.bundle/config",
    "~/.config/pypoetry/auth.toml", "~/.config/pip/pip.conf", "~/.pip/pip.conf",
    # shell and REPL histories (commands typed with secrets in them)
    "~/.bash_history", "~/.zsh_history", "~/.zhistory", "~/.histfile", "~/.sh_history",
    "~/.history", "~/.python_history", "~/.psql_history", "~/.mysql_history",
    "~/.sqlite_history", "~/.node_repl_history", "~/.lesshst", "~/.local/share/fish",
    "~/.config/fish/fish_history", "~/.zsh_sessions", "~/.config/zsh/.zsh_history",
    "~/.local/state/zsh", "~/.local/share/zsh", "~/.irb_history", "~/.pry_history",
    "~/.rediscli_history", "~/.dbshell", "~/.mongosh", "~/.ipython",
    "~/.local/share/atuin", "~/.config/nushell/history.txt",
    # browser profiles (cookies, saved passwords)
    "~/.mozilla", "~/.config/google-chrome", "~/.config/chromium",
    "~/.config/BraveSoftware", "~/.config/microsoft-edge", "~/.var/app",
    "~/.config/vivaldi", "~/.config/opera", "~/.librewolf", "~/snap/firefox",
    "~/snap/chromium", "~/.thunderbird", "~/.local/share/qutebrowser",
    # the agent's own secrets and state
    "~/.config/passepartout", "~/.local/state/passepartout", "~/.local/share/passepartout",
    # the system's
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh",
    "/root/.ssh", "/etc/ssl/private", "/etc/letsencrypt", "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
)

# Shell start-up files: writing one runs code outside the sandbox at the next login.
SHELL_RC: frozenset[str] = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
        ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
        ".inputrc", "config.fish", ".xprofile", ".xsessionrc", ".xinitrc",
    }
)

# Shell and session start-up files by pattern: a file or directory whose name matches is
# protected wherever it is (``~/.bash_aliases``, ``~/.bashrc.d/x``, ``~/.xsession``,
# ``~/.zsh/plugins/...``); the file tools match every component of a path.
STARTUP_PATTERNS: tuple[str, ...] = (
    ".bash*", ".zsh*", ".zlog*", ".zprofile", ".profile", ".xsession*", ".xinitrc",
    ".xprofile", ".xserverrc", ".pam_environment", ".login", ".logout", ".kshrc", ".mkshrc",
    ".cshrc", ".tcshrc", ".inputrc", ".oh-my-zsh", ".bash_it", ".envrc.d",
)
# Home-relative places that start programs at login or with the session, protected in
# any home (the file tools match them anywhere in a path).
STARTUP_PLACES: tuple[str, ...] = (
    ".config/fish", ".config/environment.d", ".config/autostart", ".config/systemd",
    ".config/plasma-workspace", ".config/upstart", ".local/share/systemd",
    ".local/share/applications", ".local/bin", ".config/emacs", ".config/git",
    ".config/direnv", ".emacs.d", ".emacs", ".gitconfig",
)
# The names of :data:`STARTUP_PATTERNS` a home commonly holds, named one by one so the
# sandbox also keeps them from being made where the home is the workspace; the patterns
# themselves cover what exists (the sandbox expands them in the home).
_STARTUP_NAMED: tuple[str, ...] = (
    ".bash_aliases", ".bash_functions", ".bash_env", ".bash_completion",
    ".bash_completion.d", ".bashrc.d", ".bash_profile.d", ".zshrc.d", ".zsh", ".zfunc",
    ".xsession", ".xsessionrc", ".pam_environment", ".login", ".logout", ".mkshrc",
    ".oh-my-zsh", ".bash_it", ".xserverrc",
)

# Places whose change runs code later or changes what is trusted: writing is refused,
# and the sandbox mounts them read-only even inside the workspace.
PROTECTED: tuple[str, ...] = tuple(dict.fromkeys((
    *(f"~/{name}" for name in sorted(SHELL_RC - {"config.fish"})),
    *(f"~/{name}" for name in _STARTUP_NAMED),
    *(f"~/{pattern}" for pattern in STARTUP_PATTERNS if "*" in pattern),
    *(f"~/{place}" for place in STARTUP_PLACES),
    "~/.config", "~/.local/bin", "~/.local/share/applications", "~/.emacs",
    "~/.emacs.d", "~/.gitconfig", "~/.ssh", "~/.gnupg", "~/.aws", "~/.netrc",
    "~/.git-credentials", "~/.local/state/passepartout", "~/.local/share/passepartout",
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/opt", "/var/spool/cron",
    ".git/hooks", ".git/config", ".git/info", ".gitmodules",
)))
# Inside every git directory (a ``.git`` directory, its submodules under ``modules/``,
# a worktree's git directory, a bare repository): what runs programs or says what is
# trusted.  Read-only for the file tools and in the sandbox.
GIT_PROTECTED: tuple[str, ...] = ("hooks", "config", "config.worktree", "info")
