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
fio-rbd 3355 2381
rbdx-c1-io_uring 2447 1876
engine-c1 2960 2315
rbd-nbd-c1 2654 1843
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 28117 16289
rbdx-c1-io_uring 15814 7756
rbdx-c2-io_uring 18861 9024
engine-c1 28024 11329
engine-c2 29329 11062
engine-c4 18871 9799
rbd-nbd-c1 19590 12493
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
