#!/bin/sh
# Doxygen input filter for the lessons: their charts and diagrams are linked relative to the lesson
# (../../plots/charts/h200/pairs/step07.png, ../../plots/diagrams/07_tile.svg, for GitHub); Doxygen
# finds images by name in IMAGE_PATH, so the path is cut down to the file name.
sed -e 's@(\(\.\./\.\./\)\{0,1\}plots/charts/[a-z0-9-]*/\(pairs/\)\{0,1\}@(@g' \
    -e 's@(\(\.\./\.\./\)\{0,1\}plots/diagrams/@(@g' "$1"
