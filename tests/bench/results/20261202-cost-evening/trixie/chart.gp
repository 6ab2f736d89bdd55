set terminal png size 1000,420
set output 'chart.png'
set multiplot layout 1,2
set logscale x 2
set xlabel 'connections'
set key top right
set title 'threads per connection'
plot 'nbdkit-1img.dat' using 1:2 with linespoints title 'nbdkit-1img', 'nbdkit-4img.dat' using 1:2 with linespoints title 'nbdkit-4img', 'nbdkit-16img.dat' using 1:2 with linespoints title 'nbdkit-16img', 'engine-1img.dat' using 1:2 with linespoints title 'engine-1img', 'engine-4img.dat' using 1:2 with linespoints title 'engine-4img', 'engine-16img.dat' using 1:2 with linespoints title 'engine-16img'
set title 'RSS MiB per connection'
plot 'nbdkit-1img.dat' using 1:3 with linespoints title 'nbdkit-1img', 'nbdkit-4img.dat' using 1:3 with linespoints title 'nbdkit-4img', 'nbdkit-16img.dat' using 1:3 with linespoints title 'nbdkit-16img', 'engine-1img.dat' using 1:3 with linespoints title 'engine-1img', 'engine-4img.dat' using 1:3 with linespoints title 'engine-4img', 'engine-16img.dat' using 1:3 with linespoints title 'engine-16img'
unset multiplot
