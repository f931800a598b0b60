#!/bin/sh
# Doxygen input filter for the lessons: their charts are linked relative to the lesson
# (../../plots/charts/h200/pairs/step07.png, for GitHub); Doxygen finds images by name in
# IMAGE_PATH, so the path is cut down to the file name.
sed -e 's@(\(\.\./\.\./\)\{0,1\}plots/charts/h200/\(pairs/\)\{0,1\}@(@g' "$1"
