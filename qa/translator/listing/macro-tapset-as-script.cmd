# nor a library macro file of it, under any name (the same file: device and inode)
status: 1
args: -p1 ./qa/../tapset/this.stpm
