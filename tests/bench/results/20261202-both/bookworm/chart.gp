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
fio-rbd 3002 1163
rbdx-c1-io_uring 1925 1905
engine-c1 2574 2367
qemu-nbd 1051 1076
qsd 2119 563
rbd-nbd-c1 3678 1044
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 4307 4606
rbdx-c1-io_uring 2546 2684
rbdx-c2-io_uring 4504 1696
rbdx-c4-io_uring 4989 1414
engine-c1 3196 3258
engine-c2 8238 2783
engine-c4 8065 3238
qemu-nbd 3140 2986
qsd 2954 2237
rbd-nbd-c1 3572 2478
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
