#!/usr/bin/env bash
# Post review.md as the pull request's one review comment, or edit the one already there
# (found by the marker on its first line). Needs GH_TOKEN, REPO and PR in the environment.
set -euo pipefail
marker="$(head -n 1 review.md)"
id="$(gh api --paginate "repos/${REPO}/issues/${PR}/comments" \
  --jq ".[] | select(.user.login == \"github-actions[bot]\" and (.body | startswith(\"${marker}\"))) | .id" | head -n 1)"
if [[ -n "${id}" ]]; then
  gh api --method PATCH "repos/${REPO}/issues/comments/${id}" -F body=@review.md > /dev/null
else
  gh api --method POST "repos/${REPO}/issues/${PR}/comments" -F body=@review.md > /dev/null
fi
