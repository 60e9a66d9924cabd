# the simplest point
args: -l begin
