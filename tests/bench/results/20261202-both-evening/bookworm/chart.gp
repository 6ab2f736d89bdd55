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
fio-rbd 2360 1388
rbdx-c1-io_uring 1300 1143
rbdx-c1-callback 1562 829
engine-c1 1725 529
rbd-nbd-c1 1361 565
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1', $d0 using 3 title 'randwrite-4k-qd1'
$d1 << EOD
fio-rbd 16021 6155
rbdx-c1-io_uring 9667 4526
rbdx-c2-io_uring 12846 5261
rbdx-c1-callback 10151 4435
rbdx-c2-callback 10101 5106
engine-c1 13686 6160
engine-c2 13949 5549
engine-c4 10678 4904
rbd-nbd-c1 12279 4373
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32'
unset multiplot
