set terminal pngcairo size 1280,720 font 'sans,10'
set termoption noenhanced
set output 'chart.png'
set grid ytics
set key inside top right vertical
set ylabel 'IOPS (median)'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set multiplot layout 1,2 title '4k IOPS by system and NBD connection count (rbdx-cN = N connections; median of rounds)'
$d0 << EOD
fio-rbd 3455 2247
rbdx-c1-io_uring 2149 1355
engine-c1 2796 1810
rbd-nbd-c1 2660 1821
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 23213 8858
rbdx-c1-io_uring 15108 6710
rbdx-c2-io_uring 17775 7206
engine-c1 21762 7142
engine-c2 21422 7352
engine-c4 15238 7439
rbd-nbd-c1 17551 7335
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
