"""A real authorization server for the tests: oidc-provider (npm), see README.md."""
