# git: init, add and commit three times in the working directory, with a
# fixed author and dates so the commit ids are the same on every run.
set -e
export GIT_CONFIG_GLOBAL=/dev/null  # the user's own ~/.gitconfig would change the native run; /etc/gitconfig is read
export GIT_AUTHOR_NAME=duet GIT_AUTHOR_EMAIL=duet@example.org
export GIT_COMMITTER_NAME=duet GIT_COMMITTER_EMAIL=duet@example.org
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
git init -q -b main repo
cd repo
for i in 1 2 3; do
  seq 1 $((i * 1000)) > numbers.txt
  echo "revision $i" > README
  mkdir -p dir$i && echo "file $i" > dir$i/f
  git add -A
  git commit -q -m "commit $i"
  git log -1 --format='%H %s'
done
git fsck --no-progress --strict && echo fsck ok
git log --stat --format='%H %an %s' | head -30
