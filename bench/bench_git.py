"""What every bench script that commits in a throwaway repository shares: a fixed author, no system config."""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
    "GIT_CONFIG_NOSYSTEM": "1",
}
