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
fio-rbd 3998 2045
rbdx-c1-io_uring 3222 1121
engine-c1 3399 1304
qemu-nbd 2689 1411
qsd 1533 1247
rbd-nbd-c1 3787 1596
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 12670 7726
rbdx-c1-io_uring 8366 4998
rbdx-c2-io_uring 9448 5129
rbdx-c4-io_uring 10374 6331
engine-c1 12087 8214
engine-c2 12340 8128
engine-c4 9238 7490
qemu-nbd 3058 6477
qsd 3623 7690
rbd-nbd-c1 7799 8568
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
