"""The places no tool may read (credentials) or write (what runs code or holds trust).

One list for every consumer: the file tools refuse them, the shell analyser asks or
refuses, and the sandbox hides the credentials and mounts the protected places
read-only (after every bind, so no workspace uncovers them).  The agent's own places
(config, state, skills directories, ``approvals.org``, ``policy.toml``) are added at
run time by :class:`passepartout.security.guard.Security`.

Entries starting with ``~`` are relative to the home directory; entries without a
leading ``/`` or ``~`` (``.git/hooks``) match wherever they appear in a path.  The file
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

# Places whose change runs code later or changes what is trusted: writing is refused,
# and the sandbox mounts them read-only even inside the workspace.
PROTECTED: tuple[str, ...] = (
    *(f"~/{name}" for name in sorted(SHELL_RC - {"config.fish"})),
    "~/.config", "~/.local/bin", "~/.local/share/applications", "~/.emacs",
    "~/.emacs.d", "~/.gitconfig", "~/.ssh", "~/.gnupg", "~/.aws", "~/.netrc",
    "~/.git-credentials", "~/.local/state/passepartout", "~/.local/share/passepartout",
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/opt", "/var/spool/cron",
    ".git/hooks", ".git/config", ".git/info", ".gitmodules",
)
